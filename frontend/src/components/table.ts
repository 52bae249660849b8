// A table whose headers sort it. Sorting itself is model/sort.ts; this only
// draws the headers (with aria-sort) and the rows it is given.

import { el } from "./dom";

export interface Column<T, K extends string> {
  key: K;
  label: string;
  numeric?: boolean;
  /** Columns without a sort key are not clickable. */
  sortable?: boolean;
  cell(row: T): Node | string;
}

export interface SortState<K extends string> {
  key: K;
  dir: "asc" | "desc";
}

export function dataTable<T, K extends string>(
  columns: readonly Column<T, K>[],
  rows: readonly T[],
  opts: { sort?: SortState<K>; onSort?: (key: K) => void; rowKey?: (row: T) => string; className?: string } = {},
): HTMLTableElement {
  const head = el(
    "tr",
    {},
    ...columns.map((c) => {
      const sorted = opts.sort?.key === c.key;
      const th = el("th", {
        class: c.numeric ? "num" : "",
        scope: "col",
        "aria-sort": sorted ? (opts.sort!.dir === "asc" ? "ascending" : "descending") : c.sortable ? "none" : undefined,
        "data-key": c.key,
      });
      if (c.sortable && opts.onSort) {
        const b = el("button", { type: "button", class: "th-sort" }, c.label, el("span", { class: "arrow", "aria-hidden": "true" }, sorted ? (opts.sort!.dir === "asc" ? " ▲" : " ▼") : ""));
        b.addEventListener("click", () => opts.onSort!(c.key));
        th.append(b);
      } else th.append(c.label);
      return th;
    }),
  );
  const body = el(
    "tbody",
    {},
    ...rows.map((r) => el("tr", { "data-row": opts.rowKey?.(r) }, ...columns.map((c) => el("td", { class: c.numeric ? "num" : "" }, c.cell(r))))),
  );
  return el("table", { class: "data " + (opts.className ?? "") }, el("thead", {}, head), body);
}
