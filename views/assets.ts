import stylesheet from './style.css' with { type: 'text' }

/**
 * The one stylesheet, embedded in the executable. Its URL carries a hash of
 * its content, so browsers may cache it forever and still see a new release.
 */
export const STYLESHEET = {
  path: `/assets/style-${Bun.hash(stylesheet).toString(36)}.css`,
  body: stylesheet,
}
