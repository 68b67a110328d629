// @ts-check
// Live data for the explorer's pages: what a page shows is asked for again every few seconds
// while it is open (traces keep arriving), and an answer that comes back after the page moved on
// (other filters, another page) is dropped rather than shown.

import { useEffect, useState } from 'preact/hooks';

/**
 * Calls `load` now and every `intervalMs` while the page shows `key`. `load` is given `current()`,
 * which turns false once the key changed or the page closed: an answer after that is stale.
 * @param {(current: () => boolean) => unknown} load
 * @param {string} key
 * @param {number} intervalMs
 */
export function useRefresh(load, key, intervalMs) {
  useEffect(() => {
    let stopped = false;
    const current = () => !stopped;
    void load(current);
    const timer = setInterval(() => load(current), intervalMs);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [key]);
}

/**
 * A list in pages: the first page refreshed every `intervalMs` (new items appear at the top),
 * the pages after it appended by `loadMore` from the API's `next_cursor`.
 * @template T
 * @param {(cursor: string | null) => Promise<{ items: T[], next_cursor: string | null }>} fetchPage
 * @param {string} key what the list is of (its filters); a new key starts over
 * @param {number} intervalMs
 * @param {(item: T) => string} idOf an item's id, so an item on both the first page and a later one shows once
 */
export function usePagedList(fetchPage, key, intervalMs, idOf) {
  const [first, setFirst] = useState(/** @type {T[]} */ ([]));
  const [more, setMore] = useState(/** @type {T[]} */ ([]));
  const [cursor, setCursor] = useState(/** @type {string | null} */ (null));
  const [error, setError] = useState('');
  const [loaded, setLoaded] = useState(false);
  useEffect(() => {
    setMore([]);
    setCursor(null);
  }, [key]);
  useRefresh(
    async (current) => {
      try {
        const page = await fetchPage(null);
        if (!current()) return;
        setFirst(page.items);
        setCursor((known) => known ?? page.next_cursor);
        setError('');
      } catch (failure) {
        if (current()) setError(/** @type {Error} */ (failure).message);
      } finally {
        if (current()) setLoaded(true);
      }
    },
    key,
    intervalMs,
  );
  const loadMore = async () => {
    if (!cursor) return;
    try {
      const page = await fetchPage(cursor);
      setMore((list) => [...list, ...page.items]);
      setCursor(page.next_cursor);
    } catch (failure) {
      setError(/** @type {Error} */ (failure).message);
    }
  };
  const shown = new Set(first.map(idOf));
  return {
    items: [...first, ...more.filter((item) => !shown.has(idOf(item)))],
    error,
    loaded,
    /** Whether there is a page after the ones shown. */
    hasMore: cursor !== null,
    loadMore,
    /** Shows a failure of something else on the page (a download) where the list's errors show. */
    reportError: setError,
  };
}
