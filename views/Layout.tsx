/** @jsxImportSource @kitajs/html */
import type { PropsWithChildren } from '@kitajs/html'
import type { Translator } from '../src/i18n/index.ts'
import { STYLESHEET } from './assets.ts'

/**
 * The frame of every page intake renders: in the page's language and its
 * direction, no scripts, one stylesheet served by the app.
 */
export function Layout({ title, t, children }: PropsWithChildren<{ title: string; t: Translator }>) {
  return (
    <>
      {'<!doctype html>'}
      <html lang={t.locale} dir={t.dir}>
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <meta name="robots" content="noindex, nofollow" />
          <meta name="color-scheme" content="light dark" />
          <title safe>{title}</title>
          <link rel="stylesheet" href={STYLESHEET.path} />
        </head>
        <body>
          <main>{children}</main>
        </body>
      </html>
    </>
  )
}
