// What a live view does when its event stream comes back: events sent while
// it was down were never delivered, so it fetches its data again — but only
// after a real gap, not on the first connection.

/** Returns a function fed every connection change; it answers true when the
 * view must refetch (the stream is up again after having been down). */
export function reconnectGate(): (up: boolean) => boolean {
  let down = false;
  return (up) => {
    if (!up) {
      down = true;
      return false;
    }
    const refetch = down;
    down = false;
    return refetch;
  };
}

/**
 * The list after a refetch: the fresh page replaces the rows it holds, and
 * rows loaded beyond it (older pages) are kept, in the order they were.
 */
export function mergeRefetched<T extends { id: string }>(current: readonly T[], fresh: readonly T[]): T[] {
  const ids = new Set(fresh.map((s) => s.id));
  return [...fresh, ...current.filter((s) => !ids.has(s.id))];
}
