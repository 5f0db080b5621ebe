export { envelope, type ScriptStep as Step, scriptedModel as scripted } from '../src/testing.js';
