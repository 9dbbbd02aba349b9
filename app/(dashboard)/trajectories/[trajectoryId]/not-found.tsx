"use client";

import { Missing } from "@/components/shell/missing";

export default function TrajectoryNotFound() {
  return <Missing kind="trajectory" search={(id) => `/operations?trajectory_id=${encodeURIComponent(id)}`} />;
}
