import type { AnyStateMachine, DoneActorEvent, ErrorActorEvent, EventObject } from 'xstate';
import { timeoutError } from '../../src/decide/attempt.js';
import { AMBIGUOUS, REPAIRED, UNCERTAIN, VERIFIED } from '../../src/decide/constants.js';
import type { RetryKind } from '../../src/decide/prompts.js';
import type { CheckpointEvent, CheckpointOutput, CheckpointState, CheckpointStatus } from './types.js';
import { checkpointContext, checkpointOutput } from './context.js';
import { checkpointSetup } from './setup.js';
import { arm, armSamples } from './timers.js';
import { allOf } from './guards.js';
import { isPlainObject } from '../../src/util/values.js';

/**
 * The checkpoint: every decision Booth makes about a model's replies lives here.
 *
 * Per attempt: `asking` routes to one call or to several samples. `calling` waits for the
 * model's reply to the last prompt sent (a failed call may first go `backingOff` and try
 * again); `parsing` reads it. With `samples` above 1, `sampling` gathers that many replies
 * instead, each read as it arrives, and `agreementGate` votes: the winning answer goes on
 * with the vote's confidence, and a split vote earns a `disagreement` retry. `ambiguityGate`
 * returns an ambiguous question at once; `schemaGate`, entered only when there is a
 * schema, turns the answer into the schema's output or fails it with the schema's issues;
 * `validationGate`, entered only when there is a validator, waits for its verdict;
 * with `awaitClarification`, an ambiguous question waits in `awaitingClarification` for the
 * person who asked to choose a reading or rephrase it, then a new round asks again;
 * `confidenceGate` accepts a confident answer. A
 * rejected attempt goes to `reconsidering`, which picks the retry prompt, or to
 * `uncertain` when no attempts (or no time) remain.
 *
 * Who calls the model and the validator is the runner's choice (`input.effects`):
 * `check()` and `acheck()` do it themselves and report back with events, which keeps the
 * machine pure data; a parent workflow lets the machine spawn its `callModel` and
 * `validate` actors. Both paths meet in the same events, so every decision is made once.
 */

const enter = (state: CheckpointState) => ({ type: 'enter', params: { state } }) as const;
const conclude = (status: CheckpointStatus) => ({ type: 'conclude', params: { status } }) as const;
const settle = (status: CheckpointStatus) => ({ type: 'settle', params: { status } }) as const;
const retryWith = (kind: RetryKind) => ({ type: 'prepareRetry', params: { kind } }) as const;
// Spawned actors' done and error events are not part of the machine's typed events.
const outputOf = (event: EventObject): unknown => (event as DoneActorEvent).output;
const errorOf = (event: EventObject): unknown => (event as ErrorActorEvent).error;

type StreamEvent = Extract<CheckpointEvent, { type: 'reply.ambiguityKnown' | 'reply.readingsComplete' }>;
const readAmbiguousEarly = {
  guard: { type: 'readsAmbiguous', params: ({ event }: { event: StreamEvent }) => event },
  target: 'ambiguityGate',
  actions: { type: 'readEarly', params: ({ event }: { event: StreamEvent }) => event },
} as const;
/**
 * The machine, named `id`. The clarifying machine is this one whose runs wait for a person
 * when the question is ambiguous, unless the input says `awaitClarification: false`: one
 * definition, so the two can never decide differently.
 */
const checkpointDefinition = (id: 'checkpoint' | 'clarifying', waits: boolean) =>
  checkpointSetup.createMachine({
    id,
    // A workflow's machine may have its actors replaced with .provide(): the context checks the running logic's.
    context: ({ input, self }) =>
      checkpointContext(waits && isPlainObject(input) ? { ...input, awaitClarification: input.awaitClarification ?? true } : input, (self as unknown as { logic: AnyStateMachine }).logic),
    entry: arm('deadline'),
    on: {
      'booth.resumed': { actions: ['restartClock', arm('deadline')] },
      'model.usage': [
        {
          guard: { type: 'isCurrentAttempt', params: ({ event }) => ({ attempt: event.attempt }) },
          actions: { type: 'recordUsage', params: ({ event }) => ({ usage: event.usage }) },
        },
        { actions: { type: 'recordLateUsage', params: ({ event }) => ({ usage: event.usage }) } },
      ],
    },
    initial: 'asking',
    states: {
      // Only routes, so the trace leaves it out: a one-sample run's trace is what it always was.
      asking: {
        always: [{ guard: 'isSampling', target: 'sampling' }, { target: 'calling' }],
      },
      calling: {
        entry: [enter('calling'), 'countCall', arm('callTimeout'), 'startCall'],
        exit: 'endCall',
        on: {
          'model.replied': [
            {
              guard: { type: 'isText', params: ({ event }) => ({ reply: event.reply }) },
              target: 'parsing',
              actions: { type: 'recordReply', params: ({ event }) => ({ reply: event.reply as string }) },
            },
            {
              guard: 'canRetry',
              target: 'reconsidering',
              actions: { type: 'recordNonText', params: ({ event }) => ({ reply: event.reply }) },
            },
            { guard: 'canEscalate', target: 'escalating', actions: { type: 'recordNonText', params: ({ event }) => ({ reply: event.reply }) } },
            { target: 'uncertain', actions: { type: 'recordNonText', params: ({ event }) => ({ reply: event.reply }) } },
          ],
          'model.failed': [
            {
              guard: { type: 'canRetryCall', params: ({ event }) => ({ error: event.error }) },
              target: 'backingOff',
              actions: { type: 'scheduleTry', params: ({ event }) => ({ error: event.error }) },
            },
            // A status no retry can fix (a bad key, a wrong URL) would fail every attempt alike: stop now, or ask the next model.
            {
              guard: { type: 'failedForGoodWithNextModel', params: ({ event }) => ({ error: event.error }) },
              target: 'escalating',
              actions: { type: 'recordPermanentFailure', params: ({ event }) => ({ error: event.error }) },
            },
            {
              guard: { type: 'isPermanentFailure', params: ({ event }) => ({ error: event.error }) },
              target: 'uncertain',
              actions: { type: 'recordPermanentFailure', params: ({ event }) => ({ error: event.error }) },
            },
            {
              guard: 'canRetry',
              target: 'reconsidering',
              actions: { type: 'recordCallError', params: ({ event }) => ({ error: event.error }) },
            },
            { guard: 'canEscalate', target: 'escalating', actions: { type: 'recordCallError', params: ({ event }) => ({ error: event.error }) } },
            // The last call the run could make: a call retry was still due, but the budget could not afford it.
            {
              guard: { type: 'isUnaffordedCallRetry', params: ({ event }) => ({ error: event.error }) },
              target: 'overBudget',
              actions: [{ type: 'recordCallError', params: ({ event }) => ({ error: event.error }) }, 'commitAttempt'],
            },
            { target: 'uncertain', actions: { type: 'recordCallError', params: ({ event }) => ({ error: event.error }) } },
          ],
          // A streamed reply decides before it ends: its interpreter ends the stream once the run leaves `calling`.
          'reply.ambiguityKnown': readAmbiguousEarly,
          'reply.readingsComplete': readAmbiguousEarly,
          'reply.memberFailed': {
            guard: { type: 'refusesMember', params: ({ event }) => event },
            target: 'answerRefused',
            actions: { type: 'refuseEarly', params: ({ event }) => event },
          },
          'model.timedOut': { actions: 'failOnTimeout' },
          'run.deadline': {
            target: 'uncertain',
            actions: {
              type: 'recordCallError',
              params: ({ context }) => ({ error: timeoutError(`the deadline of ${context.settings.deadlineMs} ms passed during the call`) }),
            },
          },
          'booth.resumed': { actions: ['restartClock', arm('deadline'), arm('callTimeout')] },
          // The spawned actor's outcome, translated into the machine's own events.
          'xstate.done.actor.callModel': { actions: { type: 'forwardReply', params: ({ event }: { event: EventObject }) => ({ reply: outputOf(event) }) } },
          'xstate.error.actor.callModel': { actions: { type: 'forwardCallError', params: ({ event }: { event: EventObject }) => ({ error: errorOf(event) }) } },
        },
      },
      backingOff: {
        entry: [enter('backingOff'), arm('backoff')],
        exit: 'endBackoff',
        on: {
          'backoff.elapsed': [
            // Usage reported while it waited (a timed-out call's, late) can leave no budget for the retry.
            { guard: 'budgetSpent', target: 'overBudget', actions: ['recordUnaffordedRetry', 'commitAttempt'] },
            { target: 'calling' },
          ],
          // A snapshot keeps no timer: a run resumed while it waited to retry waits again, in full.
          'booth.resumed': { actions: ['restartClock', arm('deadline'), arm('backoff')] },
          'run.deadline': {
            target: 'uncertain',
            actions: {
              type: 'recordCallError',
              params: ({ context }) => ({ error: timeoutError(`the deadline of ${context.settings.deadlineMs} ms passed while waiting to retry`) }),
            },
          },
        },
      },
      sampling: {
        entry: [enter('sampling'), 'startSampling', armSamples(false), 'startSampleCall'],
        exit: 'stopSampleCall',
        on: {
          'sample.replied': {
            guard: { type: 'isCurrentCall', params: ({ event }) => event },
            actions: [
              'stopSampleCall',
              { type: 'endSampleTimeout', params: ({ event }) => event },
              { type: 'recordSampleReply', params: ({ event }) => event },
              armSamples(false),
              'startSampleCall',
            ],
          },
          'sample.failed': [
            {
              guard: { type: 'canRetrySampleCall', params: ({ event }) => event },
              actions: ['stopSampleCall', { type: 'endSampleTimeout', params: ({ event }) => event }, { type: 'scheduleSampleTry', params: ({ event }) => event }, armSamples(false)],
            },
            // As for one call: the other samples would fail alike, so the attempt ends with what it has.
            {
              guard: { type: 'sampleFailedForGoodWithNextModel', params: ({ event }) => event },
              target: 'escalating',
              actions: [{ type: 'endSampleTimeout', params: ({ event }) => event }, { type: 'haltSampling', params: ({ event }) => event }],
            },
            {
              guard: { type: 'isPermanentSampleFailure', params: ({ event }) => event },
              target: 'uncertain',
              actions: [{ type: 'endSampleTimeout', params: ({ event }) => event }, { type: 'haltSampling', params: ({ event }) => event }],
            },
            {
              guard: { type: 'isCurrentCall', params: ({ event }) => event },
              actions: [
                'stopSampleCall',
                { type: 'endSampleTimeout', params: ({ event }) => event },
                { type: 'recordSampleError', params: ({ event }) => event },
                armSamples(false),
                'startSampleCall',
              ],
            },
          ],
          'sample.timedOut': {
            guard: { type: 'isCurrentCall', params: ({ event }) => event },
            actions: { type: 'failSampleOnTimeout', params: ({ event }) => event },
          },
          'sample.backoffElapsed': [
            // Other samples' calls, started while it waited, can leave no budget for its retry: it fails as its call did.
            {
              guard: { type: 'isUnaffordedBackoff', params: ({ event }) => event },
              actions: [{ type: 'recordUnaffordedSampleRetry', params: ({ event }) => event }, armSamples(false), 'startSampleCall'],
            },
            {
              guard: { type: 'isCurrentBackoff', params: ({ event }) => event },
              actions: [{ type: 'restartSample', params: ({ event }) => event }, armSamples(false), 'startSampleCall'],
            },
          ],
          'run.deadline': { target: 'uncertain', actions: 'recordSamplingDeadline' },
          'booth.resumed': { actions: ['restartClock', arm('deadline'), armSamples(true)] },
          'xstate.done.actor.callModel': { actions: { type: 'forwardSampleReply', params: ({ event }: { event: EventObject }) => ({ reply: outputOf(event) }) } },
          'xstate.error.actor.callModel': { actions: { type: 'forwardSampleError', params: ({ event }: { event: EventObject }) => ({ error: errorOf(event) }) } },
        },
        always: [
          { guard: 'allSampled', target: 'agreementGate' },
          // Adaptive samples: the vote no longer needs the calls in flight.
          { guard: 'isVoteSettled', target: 'agreementGate', actions: 'skipUnanswered' },
          // The budget starts no more samples: the attempt counts those that answered, and the run stops.
          { guard: 'samplingHalted', target: 'overBudget', actions: ['vote', 'commitAttempt'] },
        ],
      },
      agreementGate: {
        entry: [enter('agreementGate'), 'vote'],
        always: [
          { guard: allOf(['parseFailed', 'canRetry']), target: 'reconsidering' },
          { guard: allOf(['parseFailed', 'canEscalate']), target: 'escalating' },
          { guard: 'parseFailed', target: 'uncertain' },
          { target: 'ambiguityGate' },
        ],
      },
      parsing: {
        entry: [enter('parsing'), 'parse'],
        always: [
          { guard: allOf(['parseFailed', 'canRetry']), target: 'reconsidering' },
          { guard: allOf(['parseFailed', 'canEscalate']), target: 'escalating' },
          { guard: 'parseFailed', target: 'uncertain' },
          { target: 'ambiguityGate' },
        ],
      },
      ambiguityGate: {
        entry: enter('ambiguityGate'),
        always: [
          { guard: allOf(['isAmbiguous', 'canAwaitClarification']), target: 'awaitingClarification', actions: 'commitAttempt' },
          { guard: 'isAmbiguous', target: 'ambiguous', actions: 'commitAttempt' },
          { guard: 'hasSchema', target: 'schemaGate' },
          { guard: 'hasValidator', target: 'validationGate' },
          { target: 'confidenceGate' },
        ],
      },
      schemaGate: {
        entry: [enter('schemaGate'), 'awaitVerdict', 'startSchema'],
        exit: 'stopSchema',
        on: {
          'schema.returned': { actions: { type: 'recordSchemaResult', params: ({ event }) => ({ result: event.result }) } },
          'schema.threw': { actions: { type: 'recordSchemaThrow', params: ({ event }) => ({ thrown: event.error }) } },
          // An asynchronous schema may outlast the run: its verdict then comes too late, and no retry starts.
          'run.deadline': { actions: 'recordSchemaDeadline' },
          'xstate.done.actor.checkSchema': { actions: { type: 'forwardSchemaResult', params: ({ event }: { event: EventObject }) => ({ result: outputOf(event) }) } },
          'xstate.error.actor.checkSchema': { actions: { type: 'forwardSchemaError', params: ({ event }: { event: EventObject }) => ({ error: errorOf(event) }) } },
        },
        always: [
          { guard: allOf(['passedValidation', 'hasValidator']), target: 'validationGate' },
          { guard: 'passedValidation', target: 'confidenceGate' },
          { guard: allOf(['failedValidation', 'canRetry']), target: 'reconsidering' },
          { guard: allOf(['failedValidation', 'canEscalate']), target: 'escalating' },
          { guard: 'failedValidation', target: 'uncertain' },
        ],
      },
      validationGate: {
        entry: [enter('validationGate'), 'awaitVerdict', 'startValidation'],
        exit: 'stopValidation',
        on: {
          'validator.returned': { actions: { type: 'recordReturn', params: ({ event }) => ({ returned: event.value }) } },
          'validator.threw': { actions: { type: 'recordThrow', params: ({ event }) => ({ thrown: event.error }) } },
          'xstate.done.actor.validate': { actions: { type: 'forwardVerdict', params: ({ event }: { event: EventObject }) => ({ value: outputOf(event) }) } },
          'xstate.error.actor.validate': { actions: { type: 'forwardValidatorError', params: ({ event }: { event: EventObject }) => ({ error: errorOf(event) }) } },
        },
        always: [
          { guard: 'passedValidation', target: 'confidenceGate' },
          { guard: allOf(['failedValidation', 'canRetry']), target: 'reconsidering' },
          { guard: allOf(['failedValidation', 'canEscalate']), target: 'escalating' },
          { guard: 'failedValidation', target: 'uncertain' },
        ],
      },
      confidenceGate: {
        entry: enter('confidenceGate'),
        always: [
          { guard: allOf(['isConfident', 'isFirstAttempt']), target: 'verified' },
          { guard: 'isConfident', target: 'repaired' },
          { guard: 'canRetry', target: 'reconsidering' },
          { guard: 'canEscalate', target: 'escalating' },
          { target: 'uncertain' },
        ],
      },
      // Rests here until the person who asked answers, for as long as that takes: a store keeps it so.
      awaitingClarification: {
        entry: [enter('awaitingClarification'), settle(AMBIGUOUS), 'endDeadline'],
        on: {
          // The clarified round's first call must be one the budget allows: late usage, or a budget given to clarify(), can leave none.
          'clarify.chose': [
            { guard: { type: 'isUnaffordedReading', params: ({ event }) => ({ reading: event.reading }) }, target: 'overBudget' },
            {
              guard: { type: 'isOfferedReading', params: ({ event }) => ({ reading: event.reading }) },
              target: 'asking',
              actions: [{ type: 'clarify', params: ({ event }) => ({ chosen: event.reading, rephrased: null }) }, arm('deadline')],
            },
          ],
          'clarify.rephrased': [
            { guard: { type: 'isUnaffordedRephrasing', params: ({ event }) => ({ question: event.question }) }, target: 'overBudget' },
            {
              guard: { type: 'isRephrasing', params: ({ event }) => ({ question: event.question }) },
              target: 'asking',
              actions: [{ type: 'clarify', params: ({ event }) => ({ chosen: null, rephrased: event.question }) }, arm('deadline')],
            },
          ],
          'clarify.cancelled': { target: 'ambiguous' },
          // Nothing runs while a person decides: no clock to restart, no deadline to arm.
          'booth.resumed': {},
          // A late report of the ambiguous attempt's call: the next round starts its usage afresh, so it is the run's.
          'model.usage': { actions: { type: 'recordLateUsage', params: ({ event }) => ({ usage: event.usage }) } },
        },
      },
      reconsidering: {
        entry: [enter('reconsidering'), 'commitAttempt'],
        always: [
          // Checked before the retry's prompt is made: a run stopped by its budget lists only prompts it sent.
          { guard: 'budgetSpent', target: 'overBudget' },
          { guard: 'callFailed', target: 'asking', actions: retryWith('repeat') },
          { guard: 'parseFailed', target: 'asking', actions: retryWith('parse') },
          { guard: 'failedValidation', target: 'asking', actions: retryWith('validation') },
          { guard: 'isSplit', target: 'asking', actions: retryWith('disagreement') },
          { target: 'asking', actions: retryWith('confidence') },
        ],
      },
      // A streamed answer's completed member has a type the schema refuses: nothing that follows can mend it.
      answerRefused: {
        entry: enter('answerRefused'),
        always: [
          { guard: 'canRetry', target: 'reconsidering' },
          { guard: 'canEscalate', target: 'escalating' },
          { target: 'uncertain' },
        ],
      },
      // The model asked gave up: the next of the cascade begins, unless the budget cannot pay for its call.
      escalating: {
        entry: [enter('escalating'), 'commitAttempt'],
        always: [
          { guard: 'budgetSpent', target: 'overBudget' },
          { target: 'asking', actions: 'escalate' },
        ],
      },
      verified: { type: 'final', entry: [enter('verified'), conclude(VERIFIED)] },
      repaired: { type: 'final', entry: [enter('repaired'), conclude(REPAIRED)] },
      ambiguous: { type: 'final', entry: [enter('ambiguous'), settle(AMBIGUOUS)] },
      uncertain: { type: 'final', entry: [enter('uncertain'), conclude(UNCERTAIN)] },
      // The next call could pass the budget: none starts. Every attempt made was committed on the way in.
      overBudget: { type: 'final', entry: [enter('overBudget'), settle(UNCERTAIN)] },
    },
    // Declared with a string answer, the common case, so a workflow without a schema reads it typed.
    output: ({ context }) => checkpointOutput(context) as CheckpointOutput,
  });

export const checkpointMachine = checkpointDefinition('checkpoint', false);

/**
 * The checkpoint for workflows with a person in the loop: on AMBIGUOUS it waits in
 * `awaitingClarification` for `clarify.chose` ({ reading }), `clarify.rephrased`
 * ({ question }) or `clarify.cancelled`, then asks again. A parent invokes it and forwards
 * the person's answer (`sendTo`); its persisted snapshot, waiting or not, resumes after a crash.
 */
export const clarifyingMachine = /* @__PURE__ */ checkpointDefinition('clarifying', true);
