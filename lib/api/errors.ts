/** One error class, one code → status table, one JSON shape (shared/API.md "Errors"). */

export const ERROR_STATUS = {
  malformed_json: 400,
  bad_request: 400,
  invalid_query: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  too_large: 413,
  unsupported_media_type: 415,
  invalid_record: 422,
  invalid_request: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
  toJSON() {
    return { error: { code: this.code, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) } };
  }
}

export function errorBody(code: ErrorCode, message: string, details?: unknown) {
  return new ApiError(code, message, details).toJSON();
}
