// A CommonJS consumer importing the package by name under Node16 resolution.
import { buildSessionContext, CURRENT_SESSION_VERSION, SessionManager } from "pi-session-native";
import pkg = require("pi-session-native");

const sm: SessionManager = pkg.SessionManager.create(process.cwd());
const id: string = sm.appendCustomEntry("state", { n: 1 });
const version: 3 = CURRENT_SESSION_VERSION;
export const context = buildSessionContext(sm.getEntries());
export { id, version };
