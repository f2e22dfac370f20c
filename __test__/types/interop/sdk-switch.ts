// The SDK example of docs/pi-package.md (section "The SDK: useNativeSessions"), as written
// there: pi's own class, switched, keeps pi's types, so it is what createAgentSession takes.
import { createAgentSession, SessionManager } from "@earendil-works/pi-coding-agent";
import { useNativeSessions, usesNativeSessions } from "pi-session-native";

useNativeSessions(SessionManager); // every manager pi makes from here on is native
const { session } = await createAgentSession({ sessionManager: SessionManager.create(process.cwd()) });

// The class comes back with its own type; a value that is not a class does not type-check.
const same: typeof SessionManager = useNativeSessions(SessionManager);
const switched: boolean = usesNativeSessions(same);
// @ts-expect-error: useNativeSessions takes pi's class, not a manager
useNativeSessions(session.sessionManager);
export { session, switched };
