/** @jsxImportSource @kitajs/html */

/** Where a sentence takes the API client's (or the person's) words: a character no catalog or Intl output holds. */
export const SLOT = '\u0000'

/**
 * A translated sentence (made with SLOT for one placeholder) with someone
 * else's words in it, those isolated in a `bdi` so either direction reads right.
 */
export function Sentence({ text, part, class: className }: { text: string; part: string; class?: string }) {
  return (
    <>
      {text.split(SLOT).map((piece, index) =>
        index === 0 ? (
          <span safe>{piece}</span>
        ) : (
          <>
            <bdi dir="auto" class={className} safe>
              {part}
            </bdi>
            <span safe>{piece}</span>
          </>
        ),
      )}
    </>
  )
}
