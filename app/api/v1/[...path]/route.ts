import { unknownApiPath } from "@/lib/api/route";

/** Paths under /api/v1 that no route serves: a JSON 404 (docs/API.md "Errors"), after authentication. */
export const GET = unknownApiPath;
export const POST = unknownApiPath;
export const PUT = unknownApiPath;
export const PATCH = unknownApiPath;
export const DELETE = unknownApiPath;
export const OPTIONS = unknownApiPath;
