export { Reconcile, type ReconcileOptions } from "./client.js";
export { MAX_OPERATION_ID, operationIdProblem } from "./operation-id.js";
export type { GuardCall, GuardOptions } from "./guard.js";
export { ReconcileRejectedError, ReconcileUnavailableError, RetryBlockedError, ToolRefusal } from "./errors.js";
export type {
  Approval,
  ApprovalAnswer,
  AttemptFields,
  CanonicalReadFields,
  ClientEvent,
  ClientStats,
  Evidence,
  Idempotency,
  IntentFields,
  Named,
  OperationRead,
  OperationRecord,
  ReceiptExtras,
  ReceiptFields,
  RetryGate,
  SideEffect,
} from "./types.js";
