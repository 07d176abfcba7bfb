/** @jsxImportSource @kitajs/html */
import type { PropsWithChildren } from '@kitajs/html'

export const STYLESHEET_PATH = '/assets/style.css'

/** The frame of every page intake renders: no scripts, one stylesheet served by the app. */
export function Layout({ title, children }: PropsWithChildren<{ title: string }>) {
  return (
    <>
      {'<!doctype html>'}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <meta name="robots" content="noindex, nofollow" />
          <title safe>{title}</title>
          <link rel="stylesheet" href={STYLESHEET_PATH} />
        </head>
        <body>
          <main>{children}</main>
        </body>
      </html>
    </>
  )
}
