import { ProjectAnchor } from "@/components/shell/project-anchor";
import { previewJson } from "@/lib/domain/preview";

/**
 * A stage's JSON behind one click, cut to a preview on the server (TRUST.md: pages render huge
 * payloads truncated): a 100,000-key payload costs the page a few kilobytes, never the payload
 * itself. When anything was left out, the whole stage is a download away
 * (GET /api/v1/operations/{id}/stages/{seq}, which checks the reader's permission itself).
 */
export function RawPayload({ value, label = "raw JSON", download }: { value: unknown; label?: string; download?: { operationId: string; seq: number } }) {
  const { text, truncated } = previewJson(value);
  const href = download ? `/api/v1/operations/${encodeURIComponent(download.operationId)}/stages/${download.seq}` : null;
  return (
    <details className="mt-2 text-sm">
      <summary className="cursor-pointer text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300">
        {label}
        {truncated ? " (large: shown in part)" : ""}
      </summary>
      <pre className="mt-2 max-h-96 overflow-auto rounded-md bg-slate-100 p-3 font-mono text-xs dark:bg-slate-900">{text}</pre>
      {href ? (
        <p className="mt-1 text-xs">
          {truncated ? "Shown in part. " : ""}
          <ProjectAnchor href={href} download className="font-medium text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300">
            {truncated ? "Show all: download this stage as JSON" : "Download this stage as JSON"}
          </ProjectAnchor>
        </p>
      ) : null}
    </details>
  );
}
