"use client";

import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";

/** A day of the call (UTC): silent failures of the accepted receipts whose effect is known, and those not known yet. */
type Point = { day: string; accepted: number; silent: number; unknown: number; rate: number };

/** Silent-failure rate per day of the call as bars, with the counts behind each in the tooltip. */
export function SilentFailureChart({ data }: { data: Point[] }) {
  if (!data.length) return <p className="text-sm text-slate-700 dark:text-slate-300">No accepted receipts in this period.</p>;
  const rows = data.map((d) => ({ ...d, percent: Math.round(d.rate * 1000) / 10 }));
  return (
    <div className="h-56 w-full" role="img" aria-label={`Silent-failure rate per day of the call: ${rows.map((r) => `${r.day} ${r.percent}%`).join(", ")}`}>
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={rows} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="currentColor" strokeOpacity={0.15} />
          <XAxis dataKey="day" tickFormatter={(d: string) => d.slice(5)} fontSize={12} stroke="currentColor" />
          <YAxis unit="%" fontSize={12} stroke="currentColor" allowDecimals={false} />
          <Tooltip
            formatter={(_v, _n, item) => {
              const p = item.payload as Point & { percent: number };
              return [`${p.percent}% (${p.silent} of ${p.accepted} accepted with a known effect${p.unknown ? `; ${p.unknown} not known yet` : ""})`, "silent failures"];
            }}
          />
          <Bar dataKey="percent" fill="#e11d48" radius={[3, 3, 0, 0]} isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
