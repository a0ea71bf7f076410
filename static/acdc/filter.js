// The Files panel's filter: which files a query finds, best first. A file matches when the
// query's letters appear in its path in order; each matched letter scores, more when it
// follows the previous one (consecutive letters), starts a path segment or a word (after
// "/", "_", "-", ".", a space, or a lower-to-upper case change), and lies in the file name
// rather than its folders. When some path holds the query as one run of letters, the
// scattered matches are noise and are dropped (".env" does not find devcontainer.json).
// Ties go to the shorter path. No DOM here: picker.js draws the list.
(function () {
  "use strict";

  const CONSECUTIVE = 5;
  const SEGMENT_START = 8;
  const WORD_START = 6;
  const IN_NAME = 3;

  function bonuses(path) {
    const nameStart = path.lastIndexOf("/") + 1;
    const out = new Array(path.length);
    for (let i = 0; i < path.length; i++) {
      const before = i ? path[i - 1] : "/";
      let bonus = 0;
      if (before === "/") bonus = SEGMENT_START;
      else if ("_-. ".includes(before)) bonus = WORD_START;
      else if (before !== before.toUpperCase() && path[i] !== path[i].toLowerCase()) bonus = WORD_START;
      out[i] = bonus + (i >= nameStart ? IN_NAME : 0);
    }
    return out;
  }

  // The best alignment of `query` in `path` (dynamic programming over query letters), or
  // null when the letters are not all there in order.
  function score(path, query) {
    const hay = path.toLowerCase();
    const q = query.toLowerCase();
    const bonus = bonuses(path);
    let previous = null;
    for (let j = 0; j < q.length; j++) {
      const row = new Array(hay.length).fill(-Infinity);
      let bestBefore = -Infinity;  // the best of previous[0 .. i-2]
      for (let i = 0; i < hay.length; i++) {
        if (previous && i >= 2) bestBefore = Math.max(bestBefore, previous[i - 2]);
        if (hay[i] !== q[j]) continue;
        const base = 1 + bonus[i];
        if (!previous) row[i] = base;
        else {
          const joined = i >= 1 ? previous[i - 1] + CONSECUTIVE : -Infinity;
          row[i] = base + Math.max(joined, bestBefore);
        }
      }
      previous = row;
    }
    const best = previous ? Math.max(...previous) : 0;
    return best === -Infinity ? null : best;
  }

  // The paths `query` finds, best first.
  function rankFiles(paths, query) {
    const q = query.toLowerCase();
    if (!q) return paths.slice();
    const found = [];
    for (const path of paths) {
      const s = score(path, q);
      if (s !== null) found.push({ path, s, whole: path.toLowerCase().includes(q) });
    }
    const kept = found.some((f) => f.whole) ? found.filter((f) => f.whole) : found;
    kept.sort((a, b) => b.s - a.s || a.path.length - b.path.length || a.path.localeCompare(b.path));
    return kept.map((f) => f.path);
  }

  window.acdcFilter = { rankFiles, score };
})();
