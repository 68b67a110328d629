// "Did you mean …?" for a misspelt name: the closest of the names that would have been accepted,
// by edit distance, when it is close enough to be a plausible typo.

import { distance } from 'fastest-levenshtein';

/**
 * The candidate closest to `word` (case-insensitively), or undefined when none is within a typo's
 * reach: two edits (a swapped pair of letters is two), or a third of the longer name's length for
 * long names, and never more than 4.
 */
export function closestName(word: string, candidates: Iterable<string>): string | undefined {
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    if (candidate === word) continue;
    const d = distance(lower, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  if (best === undefined) return undefined;
  const limit = Math.min(4, Math.max(2, Math.floor(Math.max(word.length, best.length) / 3)));
  return bestDistance <= limit ? best : undefined;
}

/** `; did you mean "x"?` for the closest candidate, or an empty string. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const match = closestName(word, candidates);
  return match === undefined ? '' : `; did you mean "${match}"?`;
}
