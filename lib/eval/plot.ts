import { TASK_KINDS, type TaskKind } from "./tasks";
import type { Trials } from "./trials";

/**
 * The pass^k plot (issue 37) as a hand-written SVG line chart: pass^k against k, one line per
 * arm and task kind — colour by kind, solid for arm B (with Reconcile), dashed for arm A, dotted
 * for arm C (behind the MCP gateway) when it was run.
 */
const COLOURS: Record<TaskKind | "all", string> = {
  all: "#111111",
  simple: "#1f77b4",
  compound: "#ff7f0e",
  adversarial: "#d62728",
  partial: "#9467bd",
  cross_system: "#2ca02c",
};

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export function passKSvg(t: Trials, title = `pass^k, seed ${t.seed}: ${t.tasks} tasks × ${t.trials} trials`): string {
  const W = 800;
  const H = 440;
  const m = { left: 56, right: 230, top: 40, bottom: 48 };
  const pw = W - m.left - m.right;
  const ph = H - m.top - m.bottom;
  const x = (k: number) => m.left + (t.trials === 1 ? pw / 2 : ((k - 1) / (t.trials - 1)) * pw);
  const y = (v: number) => m.top + (1 - v) * ph;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${m.left}" y="22" font-size="14" font-weight="bold">${esc(title)}</text>`,
  ];
  for (let p = 0; p <= 100; p += 20) {
    out.push(`<line x1="${m.left}" y1="${y(p / 100)}" x2="${m.left + pw}" y2="${y(p / 100)}" stroke="#e0e0e0"/>`);
    out.push(`<text x="${m.left - 8}" y="${y(p / 100) + 4}" text-anchor="end">${p} %</text>`);
  }
  for (let k = 1; k <= t.trials; k++) out.push(`<text x="${x(k)}" y="${m.top + ph + 18}" text-anchor="middle">${k}</text>`);
  out.push(`<line x1="${m.left}" y1="${m.top + ph}" x2="${m.left + pw}" y2="${m.top + ph}" stroke="#333"/>`);
  out.push(`<line x1="${m.left}" y1="${m.top}" x2="${m.left}" y2="${m.top + ph}" stroke="#333"/>`);
  out.push(`<text x="${m.left + pw / 2}" y="${H - 10}" text-anchor="middle">k (trials that must all pass)</text>`);
  out.push(`<text transform="translate(14 ${m.top + ph / 2}) rotate(-90)" text-anchor="middle">pass^k</text>`);
  const DASH = { A: ` stroke-dasharray="6 4"`, B: "", C: ` stroke-dasharray="1.5 3"`, D: ` stroke-dasharray="10 3 2 3"` };
  for (const arm of t.arms) {
    for (const kind of ["all", ...TASK_KINDS] as const) {
      const pts = t.curves[arm]![kind].flatMap((v, i) => (v === null ? [] : [`${x(i + 1).toFixed(1)},${y(v).toFixed(1)}`]));
      if (!pts.length) continue;
      out.push(`<polyline data-arm="${arm}" data-kind="${kind}" fill="none" stroke="${COLOURS[kind]}" stroke-width="${kind === "all" ? 3 : 1.8}"${DASH[arm]} points="${pts.join(" ")}"/>`);
    }
  }
  // Legend: colours for the kinds, line styles for the arms.
  const lx = m.left + pw + 20;
  let ly = m.top + 6;
  for (const kind of ["all", ...TASK_KINDS] as const) {
    out.push(`<line x1="${lx}" y1="${ly}" x2="${lx + 26}" y2="${ly}" stroke="${COLOURS[kind]}" stroke-width="${kind === "all" ? 3 : 1.8}"/>`);
    out.push(`<text x="${lx + 34}" y="${ly + 4}">${esc(kind === "all" ? "all tasks" : kind)}</text>`);
    ly += 20;
  }
  ly += 10;
  out.push(`<line x1="${lx}" y1="${ly}" x2="${lx + 26}" y2="${ly}" stroke="#333" stroke-width="1.8"/><text x="${lx + 34}" y="${ly + 4}">arm B: with Reconcile</text>`);
  ly += 20;
  out.push(`<line x1="${lx}" y1="${ly}" x2="${lx + 26}" y2="${ly}" stroke="#333" stroke-width="1.8" stroke-dasharray="6 4"/><text x="${lx + 34}" y="${ly + 4}">arm A: believes the tool</text>`);
  if (t.arms.includes("C")) {
    ly += 20;
    out.push(`<line x1="${lx}" y1="${ly}" x2="${lx + 26}" y2="${ly}" stroke="#333" stroke-width="1.8"${DASH.C}/><text x="${lx + 34}" y="${ly + 4}">arm C: behind the MCP gateway</text>`);
  }
  if (t.arms.includes("D")) {
    ly += 20;
    out.push(`<line x1="${lx}" y1="${ly}" x2="${lx + 26}" y2="${ly}" stroke="#333" stroke-width="1.8"${DASH.D}/><text x="${lx + 34}" y="${ly + 4}">arm D: the gateway with verifiers</text>`);
  }
  out.push(`</svg>`);
  return out.join("\n") + "\n";
}
