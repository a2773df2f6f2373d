/**
 * `sideguard/verify`: verifying exported evidence from files. Today the ledger: `verifyLedgerFile`
 * re-checks a JSONL export exactly as `sideguard ledger verify` does. The pure line-based
 * `verifyLedgerLines` is also on the root entry `sideguard`.
 */
export { type LedgerFileVerdict, verifyLedgerFile } from './ledger-file.js';
export {
  type ExpectedHead,
  LedgerFileFailure,
  type LedgerLinesVerdict,
  type LedgerTenantHead,
  MAX_LEDGER_LINE_LENGTH,
  parseExpectedHead,
  type VerifyLedgerOptions,
  verifyLedgerLines,
} from './ledger-lines.js';
