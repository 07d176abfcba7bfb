/** @jsxImportSource @kitajs/html */
import type { PropsWithChildren } from '@kitajs/html'
import type { MessageKey, Translator } from '../src/i18n/index.ts'
import { attr } from './attributes.ts'
import { Layout } from './Layout.tsx'
import { Sentence, SLOT } from './Sentence.tsx'

/** Every page a person can see other than the form, its receipt and its answered page. */
export type StatusKind =
  | 'answered'
  | 'cancelled'
  | 'expired'
  | 'not-found'
  | 'cross-site'
  | 'rate-limited'
  | 'too-large'
  | 'too-slow'
  | 'busy'
  | 'unreadable'
  | 'error'

/** The kinds after which going back to the form and sending again can work. */
const RETRY = new Set<StatusKind>([
  'cross-site',
  'rate-limited',
  'too-large',
  'too-slow',
  'busy',
  'unreadable',
  'error',
])

export interface StatusPageProps {
  kind: StatusKind
  t: Translator
  /** The form this is about, when known: its title is shown, its link offered for a retry. */
  form?: { id: string; title: string }
  retryAfterSeconds?: number
  /** On the "too large" page: the form's file questions and the largest file each takes. */
  fileLimits?: FileLimit[]
}

export interface FileLimit {
  label: string
  bytes: number
}

/** `children` follow the message: what a post that was not recorded sent (views/SentAnswers.tsx). */
export function StatusPage({
  kind,
  t,
  form,
  retryAfterSeconds,
  fileLimits = [],
  children,
}: PropsWithChildren<StatusPageProps>) {
  const name = kind.replace('-', '_')
  const heading = t.t(`status.${name}.heading` as MessageKey)
  return (
    <Layout title={heading} t={t}>
      {form ? (
        <p class="form-name" dir="auto" safe>
          {form.title}
        </p>
      ) : (
        ''
      )}
      <h1 safe>{heading}</h1>
      <p safe>{t.t(`status.${name}.message` as MessageKey)}</p>
      {retryAfterSeconds ? <p safe>{t.t('status.retry_after', { count: retryAfterSeconds })}</p> : ''}
      {kind === 'too-large' && fileLimits.length > 0 ? (
        <>
          <p safe>{t.t('status.too_large.limits')}</p>
          <ul>
            {fileLimits.map((limit) => (
              <li>
                <Sentence
                  text={t.t('status.too_large.file_limit', { label: SLOT, size: { bytes: limit.bytes } })}
                  part={limit.label}
                />
              </li>
            ))}
          </ul>
        </>
      ) : (
        ''
      )}
      {RETRY.has(kind) && form ? (
        <p>
          <a href={`/f/${attr(form.id)}`} safe>
            {t.t('status.back')}
          </a>
        </p>
      ) : (
        ''
      )}
      {children ?? ''}
    </Layout>
  )
}
