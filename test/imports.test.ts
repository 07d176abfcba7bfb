/**
 * No import cycle in src/ or views/, type-only imports included: drivers are
 * leaves, module stores import their driver, and src/stores.ts assembles them
 * (STYLE.md, "The shape we want").
 */
import { expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const ROOT = resolve(import.meta.dir, '..')
// One per loader: in a .ts file `<T>(x) => x` is a generic arrow, which tsx reads as JSX.
const transpilers = { ts: new Bun.Transpiler({ loader: 'ts' }), tsx: new Bun.Transpiler({ loader: 'tsx' }) }
// scanImports drops imports that only bring types: those are read from the text.
const TYPE_IMPORT = /^\s*(?:import|export)\s+type\b[^;]*?\sfrom\s*['"]([^'"]+)['"]/gm
const INLINE_TYPE_IMPORT = /^\s*import\s*\{[^}]*\btype\s[^}]*\}\s*from\s*['"]([^'"]+)['"]/gm

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.tsx?$/.test(name))
    .map((name) => join(dir, name))
}

/** The files of src/ and views/ each imports (relative imports only: a package is a leaf). */
function importGraph(): Map<string, string[]> {
  const files = [...sourceFiles(join(ROOT, 'src')), ...sourceFiles(join(ROOT, 'views'))]
  const graph = new Map<string, string[]>()
  for (const file of files) {
    // The shebang of src/main.ts is not TypeScript.
    const text = readFileSync(file, 'utf8').replace(/^#!.*/, '')
    const specifiers = new Set(
      transpilers[file.endsWith('.tsx') ? 'tsx' : 'ts'].scanImports(text).map((found) => found.path),
    )
    for (const pattern of [TYPE_IMPORT, INLINE_TYPE_IMPORT]) {
      for (const match of text.matchAll(pattern)) specifiers.add(match[1]!)
    }
    const targets = [...specifiers]
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => resolve(dirname(file), specifier))
    graph.set(file, targets)
  }
  return graph
}

/** Each cycle once, as the files around it (relative to the repository). */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = []
  const state = new Map<string, 'open' | 'done'>()
  const path: string[] = []
  const visit = (file: string) => {
    state.set(file, 'open')
    path.push(file)
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue
      if (state.get(target) === 'open') cycles.push(path.slice(path.indexOf(target)).map((f) => relative(ROOT, f)))
      else if (!state.has(target)) visit(target)
    }
    path.pop()
    state.set(file, 'done')
  }
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file)
  return cycles
}

test('src/ and views/ import no cycle, type-only imports included', () => {
  const graph = importGraph()
  expect(graph.size).toBeGreaterThan(100)
  expect(cyclesOf(graph)).toEqual([])
})

test('the drivers import no module', () => {
  const graph = importGraph()
  const modules = join(ROOT, 'src', 'modules')
  const crossings = [...graph]
    .filter(([file]) => file.startsWith(join(ROOT, 'src', 'db')))
    .flatMap(([file, targets]) =>
      targets.filter((t) => t.startsWith(modules)).map((t) => `${relative(ROOT, file)} -> ${relative(ROOT, t)}`),
    )
  expect(crossings).toEqual([])
})
