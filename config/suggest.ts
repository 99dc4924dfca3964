// "Did you mean …?" for a misspelt key or value: the closest valid spelling by edit distance, when
// it is close enough to be a slip of the keyboard rather than another word.

/** Optimal string alignment distance: insertions, deletions, substitutions, adjacent swaps. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * The candidate `word` most likely meant: one differing only in case, else the only one `word`
 * abbreviates (`talos-prod`), else the nearest within a third of the word's length (at least one
 * edit). Ties go to the earlier candidate.
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  const sameButCase = candidates.find((c) => c !== word && c.toLowerCase() === lower);
  if (sameButCase) return sameButCase;
  const extended = lower.length >= 3 ? candidates.filter((c) => c.toLowerCase().startsWith(lower) && c !== word) : [];
  if (extended.length === 1) return extended[0];
  const limit = Math.max(1, Math.floor(word.length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    if (c === word) continue;
    const dist = editDistance(lower, c.toLowerCase());
    if (dist <= limit && dist < bestDistance) {
      best = c;
      bestDistance = dist;
    }
  }
  return best;
}
