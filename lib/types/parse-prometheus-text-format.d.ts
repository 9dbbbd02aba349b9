/** parse-prometheus-text-format 1.1 (no types of its own): the Prometheus text format as metric families. */
declare module "parse-prometheus-text-format" {
  export type Sample = { value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string; sum?: string; quantiles?: Record<string, string> };
  export type Family = { name: string; help: string; type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED"; metrics: Sample[] };
  export default function parsePrometheusTextFormat(text: string): Family[];
}
