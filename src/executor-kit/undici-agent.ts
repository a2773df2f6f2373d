/** undici's `Agent`, loaded after the host's fetch has claimed the global dispatcher. */
import './native-fetch-first.js';
import { Agent } from 'undici';

export { Agent };
