// The runtime factory pi's SDK takes (createAgentSessionRuntime's first argument), as the
// fidelity scenario and the SDK benchmark make it: pi's services for the cwd, no extensions,
// skills, prompt templates, themes or context files, then the session with `session` options
// (model, thinking level, tools). `sdk` is pi's package root, passed in so that a caller on a
// Node that cannot load it (the benchmark's parent) can still import this file.
export function runtimeFactory(sdk, { agentDir, settingsManager, modelRuntime }, session) {
	return async ({ cwd, sessionManager, sessionStartEvent }) => {
		const services = await sdk.createAgentSessionServices({
			cwd,
			agentDir,
			settingsManager,
			modelRuntime,
			resourceLoaderOptions: { noExtensions: true, noSkills: true, noPromptTemplates: true, noThemes: true, noContextFiles: true },
		});
		const created = await sdk.createAgentSessionFromServices({ services, sessionManager, sessionStartEvent, ...session });
		return { ...created, services, diagnostics: services.diagnostics };
	};
}
