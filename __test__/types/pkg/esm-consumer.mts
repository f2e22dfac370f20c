// An ES module consumer importing the package by name under Node16 resolution.
import { buildSessionContext, CURRENT_SESSION_VERSION, type SessionInfo, SessionManager } from "pi-session-native";
import * as pkg from "pi-session-native";

const sm: SessionManager = SessionManager.inMemory(process.cwd());
sm.appendMessage({ role: "user", content: "hello", timestamp: Date.now() });
const version: 3 = CURRENT_SESSION_VERSION;
const infos: SessionInfo[] = await SessionManager.list(process.cwd());
export const context = buildSessionContext(sm.getEntries(), sm.getLeafId());
export const viaNamespace: 3 = pkg.CURRENT_SESSION_VERSION;
export { infos, version };
