/** @jsxImportSource @kitajs/html */
import { attr } from './attributes.ts'
import { Layout } from './Layout.tsx'

/** Every page a person can see other than the form itself. */
export type StatusKind =
  | 'thanks'
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

const PAGES: Record<StatusKind, { heading: string; message: string; retry?: boolean }> = {
  thanks: {
    heading: 'Thank you',
    message: 'This form has been answered. There is nothing more to do; you can close this page.',
  },
  answered: {
    heading: 'This form was already answered',
    message: 'A form takes one answer, and it already has one. What you just sent was not recorded.',
  },
  cancelled: {
    heading: 'This form was cancelled',
    message: 'Whoever sent it no longer needs an answer, so it does not accept one.',
  },
  expired: {
    heading: 'This form has expired',
    message: 'Its time to answer has passed, so it does not accept an answer. If you still want to answer, ask whoever sent it for a new link.',
  },
  'not-found': {
    heading: 'Form not found',
    message: 'There is no form at this address. Check that the link is complete; the form may also have been deleted.',
  },
  'cross-site': {
    heading: 'Answer refused',
    message: 'This answer was sent from another website, so it was not accepted. Open the link you were given and answer there.',
    retry: true,
  },
  'rate-limited': {
    heading: 'Too many tries',
    message: 'Too many answers came from your address in the last minute. Wait a moment, then try again.',
    retry: true,
  },
  'too-large': {
    heading: 'Too large to send',
    message: 'What you sent is larger than this form accepts. Choose smaller files, then try again.',
    retry: true,
  },
  'too-slow': {
    heading: 'Sending took too long',
    message: 'Your answer arrived too slowly and was not recorded, perhaps because the connection is poor. Go back to the form and send it again.',
    retry: true,
  },
  busy: {
    heading: 'Busy for a moment',
    message: 'The server is too busy to take your answer right now, so nothing was recorded. Go back to the form and send it again in a moment.',
    retry: true,
  },
  unreadable: {
    heading: 'Answer not understood',
    message: 'What arrived could not be read as an answer to this form. Go back to the form and send it from there.',
    retry: true,
  },
  error: {
    heading: 'Something went wrong',
    message: 'Your answer may not have been recorded. Please try again in a moment.',
    retry: true,
  },
}

export interface StatusPageProps {
  kind: StatusKind
  /** The form this is about, when known: its title is shown, its link offered for a retry. */
  form?: { id: string; title: string }
  retryAfterSeconds?: number
}

export function StatusPage({ kind, form, retryAfterSeconds }: StatusPageProps) {
  const page = PAGES[kind]
  return (
    <Layout title={page.heading}>
      {form ? <p class="form-name" safe>{form.title}</p> : ''}
      <h1 safe>{page.heading}</h1>
      <p safe>{page.message}</p>
      {retryAfterSeconds ? (
        <p>
          You can try again in {retryAfterSeconds} second{retryAfterSeconds === 1 ? '' : 's'}.
        </p>
      ) : (
        ''
      )}
      {page.retry && form ? (
        <p>
          <a href={`/f/${attr(form.id)}`}>Back to the form</a>
        </p>
      ) : (
        ''
      )}
    </Layout>
  )
}
