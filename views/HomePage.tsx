/** @jsxImportSource @kitajs/html */
import { translator } from '../src/i18n/index.ts'
import { Layout } from './Layout.tsx'

/** What someone who opens the bare address sees: this is a service, not a site. */
export function HomePage({ version }: { version: string }) {
  return (
    <Layout title="intake" t={translator('en')}>
      <h1>intake is running</h1>
      <p>This server collects answers to forms. If someone sent you a link to a form, open that link to answer it.</p>
      <p class="muted">
        Developers: the API lives under <code>/api/v1</code>; its OpenAPI description is at{' '}
        <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>. Version <span safe>{version}</span>.
      </p>
    </Layout>
  )
}
