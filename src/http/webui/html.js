// @ts-check
// Binds htm's tagged templates to Preact's element factory, so components read like markup with
// no build step. Preact and htm (about 17 kB together, unminified, served from node_modules) were
// chosen over plain DOM code because forms, lists and the live stream re-render often, and keyed
// diffing keeps focus and caret positions where the user left them; hand-written DOM updates
// tend to lose them, which matters for keyboard users.

import { h } from 'preact';
import htm from 'htm';

export const html = htm.bind(h);

/**
 * An input event of a form field, whose `currentTarget` is the field.
 * @typedef {Event & { currentTarget: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement }} FieldEvent
 */

/** @typedef {import('preact').ComponentChildren} Children What a component renders inside itself. */
