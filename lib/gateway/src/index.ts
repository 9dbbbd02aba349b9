export { ConfigError, loadConfig, parseConfig, type GatewayConfig, type ToolRule } from "./config.js";
export { Gateway, type CallContext } from "./gateway.js";
export { gate, type EarlierAttempt, type GateDecision } from "./gate.js";
export { startGateway, GATEWAY_VERSION, type RunningGateway } from "./server.js";
