// What a browser without the login cookie sees (any 401).

import { el } from "../components/dom";

export function loginPage(): HTMLElement {
  return el(
    "main",
    { class: "empty", id: "login" },
    el("h1", {}, "Log in to tollgate"),
    el("p", {}, "This browser has no tollgate session. In a terminal, run"),
    el("pre", {}, "tollgate login"),
    el("p", {}, "and open the URL it prints. Login links work once, for five minutes."),
  );
}
