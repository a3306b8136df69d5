/**
 * The lexical router's features: a message's words, word pairs and character 4-grams (inside word
 * boundaries, so "refund" and "refunded" share most of theirs), as TF-IDF weights normalized to
 * unit length. Deterministic: the same text always gives the same vector.
 */

/** A sparse vector: feature index → weight. */
export type SparseVector = Map<number, number>;

/** The raw features of a text, with their counts. */
export function termsOf(text: string): Map<string, number> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
  const terms = new Map<string, number>();
  const add = (term: string) => terms.set(term, (terms.get(term) ?? 0) + 1);
  for (const [i, word] of words.entries()) {
    add(`w:${word}`);
    if (i > 0) add(`b:${words[i - 1]} ${word}`);
    const padded = ` ${word} `;
    for (let j = 0; j + 4 <= padded.length; j++) add(`c:${padded.slice(j, j + 4)}`);
  }
  return terms;
}

/** TF-IDF of a text over a vocabulary (unknown terms dropped), sublinear in counts, unit length. */
export function vectorOf(text: string, index: ReadonlyMap<string, number>, idf: readonly number[]): SparseVector {
  const vector: SparseVector = new Map();
  let norm = 0;
  for (const [term, count] of termsOf(text)) {
    const i = index.get(term);
    if (i === undefined) continue;
    const weight = (1 + Math.log(count)) * idf[i]!;
    vector.set(i, weight);
    norm += weight * weight;
  }
  const length = Math.sqrt(norm) || 1;
  for (const [i, weight] of vector) vector.set(i, weight / length);
  return vector;
}
