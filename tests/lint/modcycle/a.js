// a.js — imports b.js
import { b } from './b.js';
export const a = () => b();
