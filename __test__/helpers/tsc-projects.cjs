// `tsc -p <tsconfig> --noEmit` for many tsconfig files in one process, with one TypeScript:
//
//   node tsc-projects.cjs <typescript package dir> <tsconfig>...
//
// Prints one JSON line: [{ config, diagnostics: ["file(line,col): error TSnnnn: ..."] }].
// Each tsconfig is its own program with its own options, checked as tsc checks it
// (ts.getPreEmitDiagnostics: options, syntax, global and semantic diagnostics of every
// file). What is shared is the parsing: TypeScript is loaded once, and a file is parsed
// once for all the tsconfig files with the same target, module and moduleResolution (the
// program records module resolutions on its files, so only those settings share them),
// where separate tsc processes would do both for every tsconfig.
"use strict";
const path = require("node:path");

const [typescriptDir, ...configs] = process.argv.slice(2);
const ts = require(path.resolve(typescriptDir));

const parsed = new Map();
function hostFor(options) {
	const base = ts.createCompilerHost(options);
	const settings = JSON.stringify([options.target, options.module, options.moduleResolution]);
	return {
		...base,
		getSourceFile(fileName, languageVersionOrOptions, onError, shouldCreate) {
			const key = `${settings}\0${fileName}\0${JSON.stringify(languageVersionOrOptions)}`;
			if (!shouldCreate && parsed.has(key)) return parsed.get(key);
			const file = base.getSourceFile(fileName, languageVersionOrOptions, onError, shouldCreate);
			parsed.set(key, file);
			return file;
		},
	};
}

const format = (d) => {
	const message = ts.flattenDiagnosticMessageText(d.messageText, "\n");
	if (!d.file) return `error TS${d.code}: ${message}`;
	const { line, character } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
	return `${path.relative(process.cwd(), d.file.fileName)}(${line + 1},${character + 1}): error TS${d.code}: ${message}`;
};

const results = configs.map((config) => {
	const commandLine = ts.getParsedCommandLineOfConfigFile(path.resolve(config), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
	if (!commandLine) return { config, diagnostics: [`cannot read ${config}`] };
	const program = ts.createProgram({ rootNames: commandLine.fileNames, options: commandLine.options, host: hostFor(commandLine.options), configFileParsingDiagnostics: commandLine.errors });
	const diagnostics = [...commandLine.errors, ...ts.getPreEmitDiagnostics(program)].filter((d) => d.category === ts.DiagnosticCategory.Error);
	return { config, diagnostics: diagnostics.map(format) };
});
process.stdout.write(`${JSON.stringify(results)}\n`);
