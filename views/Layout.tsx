/** @jsxImportSource @kitajs/html */
import type { PropsWithChildren } from '@kitajs/html'
import { STYLESHEET } from './assets.ts'

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
