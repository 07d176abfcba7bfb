// Files imported `with { type: 'text' }` are embedded as strings (in the binary too).
declare module '*.css' {
  const text: string
  export default text
}
