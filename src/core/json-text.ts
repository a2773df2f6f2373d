/**
 * The one shortcut canonical JSON and record MACs share: text that JSON writes between quotes
 * exactly as it is.
 */

/**
 * Printable ASCII without `"` and `\`: NFC leaves such text unchanged, it holds no surrogate,
 * and `JSON.stringify` writes it between quotes as it is.
 */
export const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** `JSON.stringify(text)`, without the call for plain ASCII. */
export const quoteJson = (text: string): string =>
  PLAIN_ASCII.test(text) ? `"${text}"` : JSON.stringify(text);
