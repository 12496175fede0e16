// b.js — imports c.js, over two lines
import {
	c,
} from "./c.js";
export const b = () => c();
