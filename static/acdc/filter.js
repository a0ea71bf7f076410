// The Files panel's filter: which files a query finds, best first. A file matches when the
// query's letters appear in its path in order; each matched letter scores, more when it
// follows the previous one (consecutive letters), starts a path segment or a word (after
// "/", "_", "-", ".", a space, or a lower-to-upper case change), and lies in the file name
// rather than its folders. When some path holds the query as one run of letters, the
// scattered matches are noise and are dropped (".env" does not find devcontainer.json).
// Ties go to the shorter path. No DOM here: picker.js draws the list, and mention.js ranks
// the message box's @-completions (files and the repository map's symbols) with it too.
(function () {
  "use strict";

  const CONSECUTIVE = 5;
  const SEGMENT_START = 8;
  const WORD_START = 6;
  const IN_NAME = 3;

  // What matching the letter at `i` is worth beyond 1 (computed only where a letter matches).
  function bonusAt(path, i, nameStart) {
    const before = i ? path[i - 1] : "/";
    let bonus = 0;
    if (before === "/") bonus = SEGMENT_START;
    else if ("_-. ".includes(before)) bonus = WORD_START;
    else if (before !== before.toUpperCase() && path[i] !== path[i].toLowerCase()) bonus = WORD_START;
    return bonus + (i >= nameStart ? IN_NAME : 0);
  }

  // Whether the letters of `q` appear in `hay` in order (both lower case): one cheap pass
  // that turns most names away before they are scored.
  function inOrder(hay, q) {
    let k = 0;
    for (let i = 0; i < hay.length && k < q.length; i++) if (hay[i] === q[k]) k++;
    return k === q.length;
  }

  // Where each letter may go and its best score there, two of each reused from call to call
  // (grown when a longer name comes): ranking a 10k-file repository, or the repository
  // map's symbols, scores one name after another, and fresh arrays would cost more than
  // the matching.
  let table = tables(256);
  function tables(size) {
    return { size, places: [new Int32Array(size), new Int32Array(size)], values: [new Float64Array(size), new Float64Array(size)] };
  }

  // The best alignment of `query` in `path`, or null when the letters are not all there in
  // order. Dynamic programming over the query's letters, kept to the places each letter
  // occurs: a letter's score there is its own worth plus the best of the previous letter's
  // before it, CONSECUTIVE more when that one is right before it.
  function score(path, query) {
    const hay = path.toLowerCase();
    const q = query.toLowerCase();
    if (!inOrder(hay, q)) return null;
    if (table.size < hay.length) table = tables(2 * hay.length);
    const nameStart = path.lastIndexOf("/") + 1;
    let count = 0;  // how many places the previous letter has
    let places = null;
    let values = null;
    for (let j = 0; j < q.length; j++) {
      const here = table.places[j % 2];
      const worth = table.values[j % 2];
      let found = 0;
      let p = 0;
      let bestBefore = -Infinity;  // the best of the previous letter's scores at 0 .. i-2
      for (let i = hay.indexOf(q[j]); i !== -1; i = hay.indexOf(q[j], i + 1)) {
        let best = 0;
        if (places) {
          while (p < count && places[p] <= i - 2) bestBefore = Math.max(bestBefore, values[p++]);
          const joined = p < count && places[p] === i - 1 ? values[p] + CONSECUTIVE : -Infinity;
          best = Math.max(joined, bestBefore);
          if (best === -Infinity) continue;
        }
        here[found] = i;
        worth[found++] = 1 + bonusAt(path, i, nameStart) + best;
      }
      if (!found) return null;
      places = here;
      values = worth;
      count = found;
    }
    let top = 0;
    for (let k = 0; k < count; k++) top = k ? Math.max(top, values[k]) : values[k];
    return top;
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
