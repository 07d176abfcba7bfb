/** A form's `page` object as the API client gave it (CONTRACT 11); every key optional. */
export interface PageSettings {
  locale?: string
  submit_label?: string
  success_message?: string
  sender?: string
  time_zone?: string
}
