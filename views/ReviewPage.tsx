/** @jsxImportSource @kitajs/html */
import type { Translator } from '../src/i18n/index.ts'
import { attr } from './attributes.ts'
import { controlId } from './Field.tsx'
import { Layout } from './Layout.tsx'
import { AnswerRow, answerText, type ReceiptAnswer } from './ReceiptPage.tsx'
import { SendButton } from './SendButton.tsx'

/** A valid post waiting for the person's Send (`page.review`, CONTRACT 14). */
export interface ReviewView {
  formId: string
  title: string
  /** The draft that holds the post: Send names it, Change links open the form with it. */
  draftId: string
  /** Every field of the form, in its order, as the receipt will show it. */
  answers: ReceiptAnswer[]
  /**
   * The post's texts, name and text in their order, sent again with Send as
   * hidden inputs: should the draft have lapsed by then, the form comes back
   * filled with them. While the draft lives, the draft is what is recorded.
   */
  posted: Array<[name: string, text: string]>
  /** `page.submit_label`: on a review form it names the button that sends. */
  submitLabel: string | undefined
}

/**
 * "Check your answers" (GOV.UK's pattern): a summary list, each row the label,
 * the answer as the receipt shows it and a Change link back to that field of
 * the form (its text names the field for screen readers); then Send. No script.
 */
export function ReviewPage({ t, view }: { t: Translator; view: ReviewView }) {
  const formPath = `/f/${view.formId}`
  return (
    <Layout title={t.t('review.title', { title: view.title })} t={t}>
      <p class="form-name" dir="auto" safe>
        {view.title}
      </p>
      <h1 safe>{t.t('review.heading')}</h1>
      <dl class="receipt review">
        {view.answers.map((answer) => (
          <AnswerRow
            label={answer.field.label}
            after={
              <dd class="review-change">
                <a href={attr(`${formPath}?draft=${encodeURIComponent(view.draftId)}#${controlId(answer.field.key)}`)}>
                  <span safe>{t.t('review.change')}</span>
                  <span class="visually-hidden" dir="auto" safe>{` ${answer.field.label}`}</span>
                </a>
              </dd>
            }
          >
            {answerText(t, answer)}
          </AnswerRow>
        ))}
      </dl>
      <h2 safe>{t.t('review.send_heading')}</h2>
      <p safe>{t.t('review.send_text')}</p>
      <form method="post" action={attr(formPath)} accept-charset="utf-8" novalidate>
        <input type="hidden" name="_draft" value={attr(view.draftId)} />
        {view.posted.map(([name, text]) => (
          <input type="hidden" name={attr(name)} value={attr(text)} />
        ))}
        <div class="actions">
          <SendButton label={view.submitLabel} t={t} />
        </div>
      </form>
    </Layout>
  )
}
