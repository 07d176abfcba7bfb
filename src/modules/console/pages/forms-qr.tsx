/** @jsxImportSource @kitajs/html */
import { encode } from 'uqr'
import { attr } from '../../../../views/attributes.ts'

/**
 * A link as a QR code a phone's camera reads off the screen: an inline SVG
 * (the page's CSP allows no script and no outside image), one module per
 * unit, dark on white whatever the colour scheme, with the four-module quiet
 * zone the standard asks for. uqr encodes (byte mode, Reed-Solomon, masks);
 * what is drawn here is one path of the dark runs of each row.
 */
export function QrCode({ text, label }: { text: string; label: string }) {
  // Level M: a code shown on a screen, and perhaps printed, survives a smudge of 15%.
  const { data, size } = encode(text, { ecc: 'M', border: 4 })
  let path = ''
  for (const [y, row] of data.entries()) {
    for (let x = 0; x < size; ) {
      if (!row[x]) {
        x++
        continue
      }
      let run = 1
      while (x + run < size && row[x + run]) run++
      path += `M${x} ${y}h${run}v1h-${run}z`
      x += run
    }
  }
  return (
    <svg
      xmlns="http://www.w3.org/2000/svg"
      viewBox={`0 0 ${size} ${size}`}
      class="console-qr"
      role="img"
      aria-label={attr(label)}
      shape-rendering="crispEdges"
    >
      <rect width={String(size)} height={String(size)} fill="#fff" />
      <path d={path} fill="#000" />
    </svg>
  )
}
