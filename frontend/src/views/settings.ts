// Settings: per-profile prices and cache model, the default modes and the
// ask timeout. Saving goes to config.yaml (the guard edits it at the node
// level); a 400 puts its message next to the field it names.

import { button, el, errorText } from "../components/dom";
import type { AppContext, View } from "../context";
import { formatCount, formatInt } from "../format";
import { MODE_HINTS } from "../model/pill";
import {
  changedKeys,
  displayValue,
  fieldKeyOf,
  parseDurationSeconds,
  parseField,
  PROFILE_FIELDS,
  profileEffective,
  profileKeys,
  type FieldSpec,
} from "../model/settings";
import { MODES, type Mode, type Profile, type ProfilesResponse, type ProfileValue } from "../model/types";
import { ApiError } from "../transport";

const GROUP_TITLES: Record<FieldSpec["group"], string> = {
  identity: "Provider and model",
  prices: "Prices (USD per million tokens)",
  cache: "Cache model",
  behaviour: "Rewrites",
};

function fieldInput(profile: string, spec: FieldSpec, value: ProfileValue | undefined, effective: ProfileValue | undefined): HTMLInputElement | HTMLSelectElement {
  const id = `pf-${profile}-${spec.key}`;
  if (spec.kind === "select") {
    const s = el("select", { id, name: spec.key, "data-key": spec.key });
    for (const o of spec.options ?? []) {
      const label = o === "" ? `(default${effective !== undefined && effective !== null && spec.key !== "mode" ? ": " + String(effective) : ""})` : o;
      s.append(el("option", { value: o }, label));
    }
    s.value = typeof value === "string" ? value : "";
    return s;
  }
  if (spec.kind === "bool") {
    const c = el("input", { id, name: spec.key, type: "checkbox", "data-key": spec.key });
    c.checked = value === true;
    return c;
  }
  const input = el("input", {
    id,
    name: spec.key,
    "data-key": spec.key,
    type: "text",
    inputmode: spec.kind === "text" ? undefined : "decimal",
    autocomplete: "off",
    placeholder: effective !== undefined && effective !== null ? displayValue(spec, effective) : "",
  });
  input.value = displayValue(spec, value);
  return input;
}

function readInput(spec: FieldSpec, input: HTMLInputElement | HTMLSelectElement): string | boolean {
  return spec.kind === "bool" ? (input as HTMLInputElement).checked : input.value;
}

function profileForm(ctx: AppContext, p: Profile): HTMLElement {
  const own = profileKeys(p);
  const effective = profileEffective(p);
  let saved = { ...own };
  const inputs = new Map<string, HTMLInputElement | HTMLSelectElement>();
  const errors = new Map<string, HTMLElement>();
  const formError = el("p", { class: "field-error", role: "alert" });

  const groups = (Object.keys(GROUP_TITLES) as FieldSpec["group"][]).map((g) =>
    el(
      "fieldset",
      { class: "group" },
      el("legend", {}, GROUP_TITLES[g]),
      ...PROFILE_FIELDS.filter((f) => f.group === g).map((spec) => {
        const input = fieldInput(p.name, spec, own[spec.key], effective[spec.key]);
        const err = el("span", { class: "field-error", "data-error-for": spec.key, role: "alert" });
        inputs.set(spec.key, input);
        errors.set(spec.key, err);
        return el(
          "div",
          { class: "field" + (spec.kind === "bool" ? " check" : "") },
          el("label", { for: input.id }, spec.label),
          input,
          spec.help ? el("span", { class: "help" }, spec.help) : null,
          err,
        );
      }),
    ),
  );

  const clearErrors = () => {
    for (const e of errors.values()) e.textContent = "";
    for (const i of inputs.values()) i.removeAttribute("aria-invalid");
    formError.textContent = "";
  };
  const showError = (key: string | null, message: string) => {
    const target = key ? errors.get(key) : undefined;
    if (target) {
      target.textContent = message;
      inputs.get(key!)?.setAttribute("aria-invalid", "true");
      inputs.get(key!)?.focus();
    } else formError.textContent = message;
  };

  const save = button(
    "Save",
    async () => {
      clearErrors();
      const edited: Record<string, ProfileValue> = {};
      for (const spec of PROFILE_FIELDS) {
        const input = inputs.get(spec.key)!;
        const parsed = parseField(spec, readInput(spec, input));
        if (!parsed.ok) {
          showError(spec.key, parsed.message);
          return;
        }
        // An unchecked box the profile never set stays unset.
        if (spec.kind === "bool" && parsed.value === false && saved[spec.key] === undefined) continue;
        edited[spec.key] = parsed.value;
      }
      const body = changedKeys(saved, edited);
      if (Object.keys(body).length === 0) {
        ctx.toast("Nothing changed");
        return;
      }
      save.disabled = true;
      try {
        const res = await ctx.api.saveProfile(p.name, body);
        saved = res && typeof res === "object" ? profileKeys(res) : { ...saved, ...body };
        ctx.toast(`Saved ${p.name} to config.yaml; new requests use these prices`, "good");
      } catch (e) {
        if (e instanceof ApiError && e.status === 400) showError(fieldKeyOf(e.field, p.name), e.message);
        else showError(null, "Could not save: " + errorText(e));
      } finally {
        save.disabled = false;
      }
    },
    { class: "primary", "data-save": p.name },
  );

  const offPeak = own["offPeak"];
  return el(
    "section",
    { class: "card profile", "data-profile": p.name },
    el("h2", {}, p.name, p.default ? el("span", { class: "badge info" }, "default profile") : null),
    el("p", { class: "muted" }, p.builtin ? `Starts from the built-in prices${p.source ? " of " + p.source : ""}; a field left empty keeps the built-in value (shown in grey).` : "No built-in price entry: every price comes from this profile."),
    p.error ? el("p", { class: "error" }, p.error) : null,
    ...groups,
    offPeak ? el("p", { class: "muted" }, "Off-peak window: ", el("code", {}, JSON.stringify(offPeak)), " (edit it in config.yaml)") : null,
    formError,
    el("div", { class: "actions" }, save),
  );
}

function defaultsForm(ctx: AppContext, res: ProfilesResponse): HTMLElement {
  const modeSelect = el("select", { id: "global-mode" });
  for (const m of MODES) modeSelect.append(el("option", { value: m }, `${m} — ${MODE_HINTS[m].hint}`));
  modeSelect.value = res.mode;
  modeSelect.addEventListener("change", async () => {
    try {
      await ctx.api.setMode("global", modeSelect.value as Mode);
      ctx.toast(`Global mode: ${modeSelect.value}`, "good");
    } catch (e) {
      ctx.toast("Could not switch the mode: " + errorText(e), "warn");
    }
  });
  const timeout = el("input", { id: "ask-timeout", type: "text", value: `${res.askTimeoutSeconds}s`, autocomplete: "off" });
  const timeoutErr = el("span", { class: "field-error", "data-error-for": "askTimeout", role: "alert" });
  const saveTimeout = button("Save", async () => {
    timeoutErr.textContent = "";
    const secs = parseDurationSeconds(timeout.value);
    if (secs === null || secs <= 0) {
      timeoutErr.textContent = "want a duration such as 120s or 2m";
      return;
    }
    try {
      await ctx.api.saveSettings({ askTimeout: timeout.value.trim().match(/[a-z]$/) ? timeout.value.trim() : `${secs}s` });
      ctx.toast("Ask timeout saved", "good");
    } catch (e) {
      timeoutErr.textContent = e instanceof ApiError ? e.message : errorText(e);
    }
  });
  return el(
    "section",
    { class: "card" },
    el("h2", {}, "Defaults"),
    el("div", { class: "field" }, el("label", { for: "global-mode" }, "Global mode"), modeSelect, el("span", { class: "help" }, "Used where neither the session nor its profile sets one")),
    el(
      "div",
      { class: "field" },
      el("label", { for: "ask-timeout" }, "Ask timeout"),
      timeout,
      saveTimeout,
      el("span", { class: "help" }, "An unanswered question is declined after this (or the harness's own deadline, if sooner)"),
      timeoutErr,
    ),
    el("p", { class: "muted" }, "Default profile: ", el("code", {}, res.defaultProfile || "—"), " (prices requests no profile or built-in entry matches)"),
  );
}

function repriceSection(ctx: AppContext): HTMLElement {
  const b = button("Re-price history", async () => {
    const ok = await ctx.confirm({
      title: "Re-price every stored request?",
      body: "Costs are stored with the prices of their day. This recomputes them all with today's profile prices.",
      confirmLabel: "Re-price",
    });
    if (!ok) return;
    b.disabled = true;
    try {
      const r = await ctx.api.reprice();
      ctx.toast(`Re-priced ${formatCount(r.requests, "request", "requests")} in ${formatCount(r.sessions, "session", "sessions")}`, "good");
      ctx.dataChanged();
    } catch (e) {
      ctx.toast("Could not re-price: " + errorText(e), "warn");
    } finally {
      b.disabled = false;
    }
  }, { id: "reprice" });
  return el(
    "section",
    { class: "card" },
    el("h2", {}, "History"),
    el("p", {}, "New prices apply to new requests. Stored sessions keep the prices they were recorded with until you re-price them."),
    b,
  );
}

export const settingsView: View = async (root, ctx, scope) => {
  let res: ProfilesResponse;
  try {
    res = await ctx.api.profiles();
  } catch (e) {
    root.replaceChildren(el("p", { class: "error" }, "Could not load settings: " + errorText(e)));
    return;
  }
  if (!scope.alive) return;
  root.replaceChildren(
    el("h1", {}, "Settings"),
    el("p", { class: "muted" }, "Saved to config.yaml in the tollgate home; comments and key spelling are kept."),
    defaultsForm(ctx, res),
    ...res.profiles.map((p) => profileForm(ctx, p)),
    repriceSection(ctx),
  );
  if (res.profiles.length === 0) root.insertBefore(el("p", { class: "muted" }, "No profiles in config.yaml yet."), root.lastChild);
};
