"use client";

import { Missing } from "@/components/shell/missing";

export default function OperationNotFound() {
  return <Missing kind="operation" search={(id) => `/operations?q=${encodeURIComponent(id)}`} />;
}
