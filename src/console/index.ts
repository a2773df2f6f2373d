/** The approvals console (issue 11): `createConsole` and the pieces a host may reuse. */
export { type ConsoleAppContext, createConsoleApp } from './console-app.js';
export { type ConsoleConfig, createConsole, type RunningConsole } from './console-server.js';
