// The page: draws /api/state, redraws when /api/events says something changed.
// No framework and nothing fetched from elsewhere: every byte ships in the package.
"use strict";

const CSRF = document.querySelector('meta[name="mavend-csrf"]').content;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function when(iso) {
  const at = new Date(iso);
  return at.toLocaleString([], { weekday: "short", hour: "2-digit", minute: "2-digit",
                                 day: "numeric", month: "short" });
}

function say(text) {
  const status = document.getElementById("status");
  status.textContent = text;
  status.classList.add("shown");
  clearTimeout(say.timer);
  say.timer = setTimeout(() => status.classList.remove("shown"), 4000);
}

async function post(path, question, body = {}) {
  if (question && !window.confirm(question)) return;
  const response = await fetch(path, {
    method: "POST",
    headers: { "X-Mavend-CSRF": CSRF, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({}));
  say(answer.text || answer.error || `failed (${response.status})`);
  await refresh();
}

function rows(section, items, draw, empty) {
  const list = document.querySelector(`#${section} .rows`);
  list.replaceChildren(...(items.length ? items.map(draw) : [el("li", { class: "empty" }, empty)]));
}

function draw(state) {
  rows("reminders", state.reminders, (r) => el("li", { "data-id": r.id },
    el("span", { class: "what" }, r.kind === "timer" ? `Timer: ${r.name || r.text}` : r.text,
       el("br"), el("span", { class: "when" },
         r.paused_left != null ? "paused" : when(r.fire_at), r.repeats ? ` · ${r.repeats}` : "")),
    el("span", { class: "actions" },
      el("button", { onclick: () => post(`/api/reminders/${r.id}/snooze/10`) }, "+10 min"),
      el("button", { onclick: () => editReminder(r) }, "Edit"),
      el("button", { onclick: () => post(`/api/reminders/${r.id}/cancel`) }, "Cancel"))),
    "Nothing set.");
  const lists = document.querySelector("#lists .lists");
  lists.replaceChildren(...(state.lists.length ? state.lists.map((l) => el("div", {},
    el("h3", {}, l.name),
    el("ul", { class: "rows" }, ...(l.items.length ? l.items.map((i) =>
      el("li", { class: i.done ? "done" : "", "data-id": i.id }, el("span", { class: "what" }, i.text),
         el("span", { class: "actions" },
           el("button", { onclick: () => editItem(l.name, i) }, "Edit"),
           el("button", { onclick: () => post(`/api/lists/${encodeURIComponent(l.name)}/items/${i.id}/delete`,
                                               `Take “${i.text}” off the ${l.name} list?`) }, "Remove"))))
      : [el("li", { class: "empty" }, "Empty.")]))))
    : [el("p", { class: "empty" }, "No lists yet.")]));
  rows("notes", state.notes, (n) => el("li", { "data-id": n.id },
    el("span", { class: "what" }, n.text, el("br"), el("span", { class: "when" }, when(n.at))),
    el("span", { class: "actions" },
      el("button", { onclick: () => editNote(n) }, "Edit"),
      el("button", { onclick: () => post(`/api/notes/${n.id}/delete`, `Delete the note “${n.text}”?`) },
         "Delete"))), "No notes.");
  rows("facts", state.facts, (f) => el("li", { "data-id": f.id },
    el("span", { class: "what" }, f.said || `${f.key}: ${f.value}`, el("br"),
       el("span", { class: "when" }, `${f.key} · ${when(f.at)}`)),
    el("span", { class: "actions" },
      el("button", { onclick: () => editFact(f) }, "Edit"),
      el("button", { onclick: () => post(`/api/facts/${f.id}/delete`, `Delete “${f.said || f.value}”?`) },
         "Delete"))), "Nothing logged.");
  rows("changes", state.changes, (c) => el("li", { class: c.undone ? "done" : "", "data-turn": c.turn },
    el("span", { class: "what" }, c.did.join("; "), el("br"),
       el("span", { class: "when" }, `“${c.said}” · ${c.session} · ${when(c.at)}`)),
    c.undoable ? el("button", { onclick: () => post(`/api/changes/${c.turn}/undo`) }, "Undo")
               : el("span", { class: "muted" }, c.undone ? "undone" : "can't undo")),
    "Nothing changed yet.");
  rows("turns", state.turns, (t) => el("li", { "data-id": t.id },
    el("span", { class: "what" }, `“${t.heard}”`, el("br"), t.reply, el("br"),
       el("span", { class: "decision" }, decided(t), " · ", when(t.at))),
    wrong(t)), "Nothing heard yet.");
  const learned = [
    ...state.memory.repairs.map((r) => ({ ...r, kind: "repair",
      detail: `means ${r.intent}${r.fn ? ` (${r.fn})` : ""} · worked ${r.worked}, failed ${r.failed}` })),
    ...state.memory.habits.map((h) => ({ ...h, kind: "habit",
      detail: `${h.intent}${h.fn ? ` (${h.fn})` : ""} · ${h.source}` })),
  ];
  rows("memory", learned, (m) => el("li", { "data-id": m.id },
    el("span", { class: "what" }, `“${m.said}”`, el("br"),
       el("span", { class: "when" }, `${m.kind}${m.voice ? ` (${m.voice})` : ""}: ${m.detail}`)),
    el("button", { onclick: () => post(`/api/memory/${m.id}/forget`, `Forget “${m.said}”?`) },
       "Forget")), state.memory.enabled ? "Nothing learned yet." : "Memory is off.");
  rows("rooms", state.satellites, (s) => el("li", {},
    el("span", { class: "what" }, `${s.name}${s.room ? ` (${s.room})` : ""}`, el("br"),
       el("span", { class: "when" }, [s.state, s.error || s.last_error || ""].filter(Boolean).join(" · "))),
    el("span", { class: "muted" }, s.uri || "")), "No satellites: only this box listens.");
}

function editReminder(r) {
  const text = window.prompt("What should it say?", r.text);
  if (text === null) return;
  const when = window.prompt("When? Say it as you would to me (\"tomorrow at 6\"); empty keeps the time.", "");
  if (when === null) return;
  post(`/api/reminders/${r.id}/edit`, null, { text: text === r.text ? "" : text, when });
}

function editItem(list, item) {
  const text = window.prompt(`On the ${list} list:`, item.text);
  if (text !== null && text !== item.text) {
    post(`/api/lists/${encodeURIComponent(list)}/items/${item.id}/edit`, null, { text });
  }
}

function editFact(f) {
  const value = window.prompt(`${f.key}:`, f.value);
  if (value !== null && value !== f.value) post(`/api/facts/${f.id}/edit`, null, { value });
}

function editNote(n) {
  const text = window.prompt("The note:", n.text);
  if (text !== null && text !== n.text) post(`/api/notes/${n.id}/edit`, null, { text });
}

const INTENTS = ["act", "reminder", "fact", "note", "query", "chat", "system"];

// "That was wrong": what it meant, taught like a spoken "no, I meant ...".
function wrong(turn) {
  const choice = el("select", { "aria-label": "what it meant" },
    el("option", { value: "" }, "Wrong? It meant…"),
    ...INTENTS.filter((i) => i !== turn.intent).map((i) => el("option", { value: i }, i)));
  choice.addEventListener("change", () => {
    if (choice.value) post(`/api/turns/${turn.id}/wrong/${choice.value}`);
  });
  return choice;
}

function decided(turn) {
  const d = turn.decision || {};
  const stages = Object.entries(d.stage_ms || {}).map(([s, ms]) => `${s} ${ms.toFixed(1)}`);
  const slots = d.slots || {};
  const said = [slots.fn ? `${slots.fn}(${Object.entries(slots.args || {}).map(([k, v]) => `${k}=${v}`).join(", ")})` : "",
                slots.time ? `at ${when(slots.time)}` : "", slots.key ? `${slots.key}=${slots.value}` : ""];
  const parts = [turn.intent || "-", ...said, d.decided_by || "",
                 d.confidence != null ? `${Math.round(d.confidence * 100)} %` : "",
                 d.llm ? `LLM ${d.llm === "local" ? "local" : "remote"}` : "",
                 stages.length ? `stages ${stages.join(", ")} ms` : "",
                 `${turn.ms} ms in all`, turn.outcome];
  return parts.filter(Boolean).join(" · ");
}

async function refresh() {
  const response = await fetch("/api/state", { cache: "no-store" });
  if (response.ok) draw(await response.json());
}

function listen() {
  const live = document.getElementById("live");
  const source = new EventSource("/api/events");
  source.onopen = () => { live.textContent = "live"; };
  source.onerror = () => { live.textContent = "reconnecting…"; };
  for (const kind of ["changed", "turn", "fired"]) source.addEventListener(kind, refresh);
}

async function runChecks() {
  const list = document.querySelector("#checks .rows");
  list.replaceChildren(el("li", { class: "empty" }, "Checking…"));
  const response = await fetch("/api/doctor", { cache: "no-store" });
  const checks = response.ok ? await response.json() : [];
  list.replaceChildren(...checks.map((c) => el("li", { class: c.ok ? "ok" : "failing" },
    el("span", { class: "what" }, `${c.ok ? "ok" : "FAILING"} · ${c.check}: ${c.detail}`,
       ...(c.ok || !c.fix ? [] : [el("br"), el("span", { class: "when" }, `fix: ${c.fix}`)])))));
}

document.getElementById("run-checks").addEventListener("click", runChecks);
refresh();
listen();
