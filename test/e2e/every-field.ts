/**
 * The form with every field type the browser tests fill, the answer it takes as
 * JSON, its tab order, the headings of its pages, and its controls' values read
 * from the page.
 */
import type { Page } from 'playwright-core'

// ---------------------------------------------------------------- the forms

const PLAN_OPTIONS = [
  { value: 'plan-basic', label: 'Basic' },
  { value: 'plan-pro', label: 'Professional' },
  { value: 'plan-team & "co" <x>', label: 'Team, for groups' },
]

/** A form holding all 8 field types, with help texts, bounds and required ones. */
export const everyFieldForm = (title: string) => ({
  title,
  description: 'Please answer a few questions.\nIt takes about a minute.',
  fields: [
    {
      key: 'name',
      type: 'text',
      label: 'Full name',
      required: true,
      description: 'As you would like to be addressed.',
      config: { min_length: 3, max_length: 80, placeholder: 'Ada Lovelace' },
    },
    { key: 'email', type: 'email', label: 'Email address', required: true },
    { key: 'notes', type: 'textarea', label: 'Notes', description: 'Anything we should know.', config: { rows: 3 } },
    { key: 'amount', type: 'number', label: 'Amount', config: { min: 0, max: 10000, step: 0.5 } },
    // A drop-down (3 options would be radios by default; browser-languages.test.ts answers radios).
    {
      key: 'plan',
      type: 'select',
      label: 'Plan',
      required: true,
      config: { display: 'dropdown', options: PLAN_OPTIONS },
    },
    { key: 'agree', type: 'checkbox', label: 'I agree to the terms', required: true },
    { key: 'newsletter', type: 'checkbox', label: 'Send me the newsletter' },
    { key: 'start', type: 'date', label: 'Start date', config: { min: '2020-01-01', max: '2030-12-31' } },
    { key: 'attachment', type: 'file', label: 'Attachment', config: { max_size: 1024 * 1024 } },
  ],
})

/** The tab stops of an every-field form, in page order. */
export const EVERY_FIELD_TAB_ORDER = [
  '#field-name',
  '#field-email',
  '#field-notes',
  '#field-amount',
  '#field-plan',
  '#field-agree',
  '#field-newsletter',
  '#field-start',
  '#field-attachment',
  'button:Send answer',
]

/** Right after sending, the receipt; every later visit, the answered page. */
export const RECEIPT_HEADING = 'Your answer has been sent'
export const ANSWERED_HEADING = 'This form has been answered'

/** A valid answer to an every-field form, as the JSON submission takes it. */
export const VALID_JSON_ANSWER = { name: 'Grace Hopper', email: 'grace@example.org', plan: 'plan-basic', agree: true }

/** What the controls of an every-field form hold (the file control aside). */
export const controlValues = async (page: Page) => ({
  name: await page.locator('#field-name').inputValue(),
  email: await page.locator('#field-email').inputValue(),
  notes: await page.locator('#field-notes').inputValue(),
  amount: await page.locator('#field-amount').inputValue(),
  plan: await page.locator('#field-plan').inputValue(),
  agree: await page.locator('#field-agree').isChecked(),
  newsletter: await page.locator('#field-newsletter').isChecked(),
  start: await page.locator('#field-start').inputValue(),
})
