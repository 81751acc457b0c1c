// Entry of a page-analysis worker thread. Worker threads do not inherit the parent's TypeScript
// loader, so the thread registers tsx itself before importing the TypeScript module.
import { register } from 'tsx/esm/api';

register();
const { analysePage } = await import('./page-analysis.ts');

export default analysePage;
