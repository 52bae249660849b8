// A few DOM helpers, so views read as the markup they build. Text always
// goes in through text nodes (never innerHTML): session titles and harness
// names come from outside.

type Attrs = Record<string, string | number | boolean | undefined | null>;
type Child = Node | string | number | null | undefined | false;

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = String(v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  append(e, ...children);
  return e;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    parent.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
}

export function button(label: string, onClick: (ev: MouseEvent) => void, attrs: Attrs = {}): HTMLButtonElement {
  const b = el("button", { type: "button", ...attrs }, label);
  b.addEventListener("click", onClick);
  return b;
}

/** A view's lifetime: cleanups run when the view goes away. */
export class Scope {
  private cleanups: (() => void)[] = [];
  private disposed = false;

  add(fn: () => void): void {
    if (this.disposed) fn();
    else this.cleanups.push(fn);
  }

  get alive(): boolean {
    return !this.disposed;
  }

  dispose(): void {
    this.disposed = true;
    for (const fn of this.cleanups.splice(0).reverse()) {
      try {
        fn();
      } catch (e) {
        console.error("tollgate: cleanup failed", e);
      }
    }
  }
}

/** Runs fn at most once per `ms`, trailing (live updates arrive in bursts). */
export function throttle(fn: () => void, ms: number): { (): void; cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const run = () => {
    if (timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      fn();
    }, ms);
  };
  run.cancel = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  return run;
}

/** A message of what went wrong, for any thrown value. */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
