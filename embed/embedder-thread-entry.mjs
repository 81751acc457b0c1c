// Entry of the embedding thread (embed/embedder-thread.ts): the TypeScript body comes compiled or
// through tsx (infra/thread-body.mjs).
import { importThreadBody } from '../infra/thread-body.mjs';

await importThreadBody(new URL('./embedder-thread-main.ts', import.meta.url));
