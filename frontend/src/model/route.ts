// Hash routes, so a reload lands where the user was: #/overview,
// #/sessions, #/sessions/<id>, #/settings, #/integrations, #/data.

export type Route =
  | { view: "overview" }
  | { view: "sessions" }
  | { view: "session"; id: string }
  | { view: "settings" }
  | { view: "integrations" }
  | { view: "data" };

export type ViewName = Route["view"];

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#\/?/, "").replace(/\/+$/, "");
  const [head, ...rest] = path.split("/");
  switch (head) {
    case "sessions":
      if (rest.length > 0 && rest.join("/") !== "") {
        let id = rest.join("/");
        try {
          id = decodeURIComponent(id);
        } catch {
          // a malformed escape: use it as typed
        }
        return { view: "session", id };
      }
      return { view: "sessions" };
    case "settings":
    case "integrations":
    case "data":
    case "overview":
      return { view: head };
    default:
      return { view: "overview" };
  }
}

export function routeHash(r: Route): string {
  return r.view === "session" ? `#/sessions/${encodeURIComponent(r.id)}` : `#/${r.view}`;
}

/** The tab a route belongs to (a session lives under Sessions). */
export function tabOf(r: Route): Exclude<ViewName, "session"> {
  return r.view === "session" ? "sessions" : r.view;
}
