// c.js — imports b.js
import { b } from './b.js';
export const c = () => b();
