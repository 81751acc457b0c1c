// Preloaded with --import by testbed/loaded-modules.ts: registers the hooks that record each module.
import { register } from 'node:module';

register(new URL('./loaded-modules-hooks.mjs', import.meta.url), {
  data: { file: process.env.GLEANER_TEST_LOADED_MODULES },
});
